class ArticlesController < ApplicationController
  # The page the request cost is measured on: 50 `render partial:` calls and one
  # collection render of 50 (app/views/articles/index.html.erb).
  def index
    @articles = Article.order(:id).limit(50).to_a
  end

  def show
    render json: Article.find(params[:id])
  end

  def new
    @article = Article.new
  end

  # Protected against forgery (ActionController::Base's default): a POST without the
  # form's authenticity token gets 422.
  def create
    @article = Article.new(params.require(:article).permit(:title, :body))
    if @article.save
      redirect_to articles_path
    else
      render :new, status: :unprocessable_entity
    end
  end

  def boom
    raise ArgumentError, "an action that raises"
  end
end
